"""A griffe extension: ``kernels/`` documented as ``vecenv.kernels``, where an install puts it
(setup.py maps the folder onto the package), though on disk it is no folder of ``vecenv/``."""

import griffe


class SourceFolders(griffe.Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.path == "vecenv" and "kernels" not in pkg.members:
            pkg.set_member("kernels", loader.load("kernels", find_stubs_package=False))
