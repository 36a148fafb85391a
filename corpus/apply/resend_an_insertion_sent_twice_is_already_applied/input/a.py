import os

print(1)
