#!/bin/sh
# The demo project's own test: the program prints its greeting.
./hello | grep -q 'hello from the demo project'
