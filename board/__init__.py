"""Board setup and preflight: ``hexvoice doctor`` and the installer.

The board profiles they use are ``daemon/targets/`` (the runtime
checks bundles against them too).

``board/install.sh`` / ``board/uninstall.sh`` set a QCS8550 up and take it down again;
see ``board/README.md``.  Importing this package does nothing.
"""
