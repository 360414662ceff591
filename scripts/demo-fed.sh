#!/usr/bin/env bash
echo "fedtrain demo: not built yet" >&2; exit 1
