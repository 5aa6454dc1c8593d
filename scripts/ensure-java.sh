#!/bin/sh
# Java for the Spark tests (`make test` runs this). It is installed with apt-get only where
# that needs no question: as root, or with sudo that asks no password. Anywhere else
# (macOS, a non-root user) this says that the Spark tests will be skipped and lets the rest
# of the suite run. Under CI=true a missing Java still fails the Spark tests loudly
# (tests/support/requires.py), so a broken CI image cannot hide the Spark suite.
if command -v java >/dev/null 2>&1; then exit 0; fi
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then exit 0; fi

if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        sudo="none"
    fi
    if [ "$sudo" != none ]; then
        echo "installing Java for Spark (apt-get)"
        if $sudo apt-get update -qq && $sudo apt-get install -y -qq openjdk-17-jre-headless; then
            exit 0
        fi
        echo "apt-get could not install Java"
    fi
fi

case "$(printf '%s' "${CI:-}" | tr 'A-Z' 'a-z')" in
    true|1) echo "Java is missing and cannot be installed here: with CI=$CI the Spark tests will FAIL" ;;
    *) echo "Java is missing and cannot be installed here (no apt-get, or neither root nor" \
            "password-less sudo): the Spark tests will be skipped. Install a Java 17 runtime" \
            "(or set JAVA_HOME) to run them." ;;
esac
exit 0
