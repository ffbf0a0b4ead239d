"""expecttest.py - a stand-in for the `expecttest` module, which PyTorch's test database
(torch.testing._internal) imports and Debian does not package. tools/opinfo/generate.py puts this
folder on sys.path; nothing of expecttest is used when only sample inputs are drawn."""
import unittest


class TestCase(unittest.TestCase):
    pass


ACCEPT = False
