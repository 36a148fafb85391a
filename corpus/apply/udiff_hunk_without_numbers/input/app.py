def greet():
    name = "world"
    print("Hi")
    return name
