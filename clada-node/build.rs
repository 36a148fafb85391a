fn main() {
    // The linker arguments of a Node addon (on macOS, symbols left for
    // Node to provide); nothing on Linux.
    napi_build::setup();
}
