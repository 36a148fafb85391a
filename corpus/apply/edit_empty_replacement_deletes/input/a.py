import os
import sys
import unused

print(os.name)
