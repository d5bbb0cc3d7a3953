"""Reference implementations, data sets and tools of the Probabilistic Machine Learning course.

One module per chapter (``mle``, ``bayes``, ``naive_bayes``, ``gda``, ...), plus ``datasets``,
``plotting``, ``grading`` and the ``mlcourse`` command line (``cli``). Import the module you
need: ``from mlcourse_utils import mle``.
"""

__version__ = "0.1.0"
