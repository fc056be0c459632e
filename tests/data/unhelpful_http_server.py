#!/usr/bin/env python3
"""An HTTP server on 127.0.0.1 that never completes a download, to test interrupting one.

silent: accepts connections, reads the request and never answers.
slow:   answers 200 with the Content-Length of FILE, then sends it 4 KB every 50 ms (80 KB/s:
        above curl's low-speed limit, so only an interruption ends the transfer early).
Prints "port N" once listening; serves until killed.
Usage: unhelpful_http_server.py silent|slow [FILE]
"""
import os
import socket
import sys
import threading
import time


def serve(connection, mode, file):
    with connection:
        connection.recv(65536)
        if mode == "silent":
            while connection.recv(65536):
                pass
            return
        size = os.path.getsize(file)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\n"
                           b"Content-Length: %d\r\n\r\n" % size)
        with open(file, "rb") as data:
            while True:
                chunk = data.read(4096)
                if not chunk:
                    return
                try:
                    connection.sendall(chunk)
                except OSError:
                    return  # the client went away
                time.sleep(0.05)


def main():
    mode = sys.argv[1]
    file = sys.argv[2] if len(sys.argv) > 2 else None
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    print("port", server.getsockname()[1], flush=True)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection, mode, file), daemon=True).start()


if __name__ == "__main__":
    main()
