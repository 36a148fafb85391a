def greet():
    print("hello, world")
