function test() {
    return false;
}
