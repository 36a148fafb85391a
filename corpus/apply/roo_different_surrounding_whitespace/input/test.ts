
function example() {
    return 42;
}

