"""Board setup and preflight: profiles (``board/profiles``), ``hexvoice doctor``.

``board/install.sh`` / ``board/uninstall.sh`` set a QCS8550 up and take it down again;
see ``board/README.md``.  Importing this package does nothing.
"""
