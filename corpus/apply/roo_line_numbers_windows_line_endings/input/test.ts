function test() {
    return true;
}
