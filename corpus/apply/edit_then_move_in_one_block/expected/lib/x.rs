fn c() {}
