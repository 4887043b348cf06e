import os, sys
sys.path.insert(0, os.getcwd())
from calc import double
assert double(4) == 8
