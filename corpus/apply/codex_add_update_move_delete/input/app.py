def greet():
    print("Hi")
