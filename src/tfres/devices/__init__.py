"""Device settings in one safe call (``tfres.configure``), and the same settings for a
program that never imports tfres (:mod:`.child_env`, applied by :mod:`.inject.sitecustomize`).
"""
