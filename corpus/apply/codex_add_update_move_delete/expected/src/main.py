def greet():
    print("Hello")
