#!/usr/bin/env python3
"""Writes OUT_DIR/cifar-10-binary.tar.gz in the official layout and size and prints its MD5.

cifar-10-batches-bin/data_batch_1..5.bin and test_batch.bin hold 10,000 records of 3073 bytes each
(label byte, then 3072 pixel bytes), like the official files, so dtbench's size checks accept
them; batches.meta.txt names the classes. The pixels repeat every 256 records, so the archive
compresses to a few MB. The MD5 comes from Python's hashlib, independent of dtbench's.
Usage: make_cifar10_archive.py OUT_DIR
"""
import hashlib
import io
import os
import sys
import tarfile

RECORDS = 10000
IMAGE_BYTES = 3072
CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def records(batch, rows):
    return b"".join(bytes([(r + batch) % 10]) + rows[(r * 3 + batch) % 256] for r in range(RECORDS))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rows = [bytes((i * 7 + k) % 256 for i in range(IMAGE_BYTES)) for k in range(256)]
    files = {f"data_batch_{b}.bin": records(b, rows) for b in range(1, 6)}
    files["test_batch.bin"] = records(0, rows)
    files["batches.meta.txt"] = "".join(name + "\n" for name in CLASSES).encode()
    path = os.path.join(out, "cifar-10-binary.tar.gz")
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo("cifar-10-batches-bin/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with open(path, "rb") as archive:
        print(hashlib.md5(archive.read()).hexdigest())


if __name__ == "__main__":
    main()
