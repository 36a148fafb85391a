def greet(name):
    print("Hello, " + name)


def main():
    # TODO: read the name from the command line
    greet("world")


if __name__ == "__main__":
    main()
