def greet():
    name = "world"
    print("Hello")
    return name
