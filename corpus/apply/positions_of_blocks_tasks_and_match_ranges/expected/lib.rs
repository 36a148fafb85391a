fn a() {}
fn b() {}
fn a() {}
fn b() {}
