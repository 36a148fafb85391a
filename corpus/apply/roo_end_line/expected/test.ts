function helloWorld() {
    console.log("hello")
}
