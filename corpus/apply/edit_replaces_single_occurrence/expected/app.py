import os

def greet(name, greeting="Hello"):
    print(f"{greeting}, {name}")

greet("world")
