"""What pytest collects from the whole checkout (the package's examples and ``tests/``).

``src/evalframe/ray.py`` imports Ray (the ``ray`` extra, in the ``test`` extra): without
it, its examples are not collected (``tests/test_ray.py`` skips its own tests).
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("ray") else ["src/evalframe/ray.py"]
