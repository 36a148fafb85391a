function one() {
    return 10;
}

function two() {
    return 20;
}