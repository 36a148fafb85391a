function hello() {}
