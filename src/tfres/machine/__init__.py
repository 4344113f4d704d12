"""What this machine is and whether it is set up right: :mod:`.fingerprint` (``tfres env``) and
:mod:`.doctor` (``tfres doctor``).
"""
