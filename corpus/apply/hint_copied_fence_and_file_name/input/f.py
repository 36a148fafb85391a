import os

def g():
    pass
