def greet():
    name = "you"
    print("Hello")
    return name
