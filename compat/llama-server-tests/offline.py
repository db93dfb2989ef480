"""A pytest plugin for llama.cpp's server test suite: the models come from the shared directory (the wrapper maps
the suite's names onto them), so the suite's session-wide download of every preset is skipped."""
import utils


def pytest_configure(config):
    utils.ServerPreset.load_all = staticmethod(lambda: None)
