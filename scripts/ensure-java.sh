#!/bin/sh
# Java for the Spark tests, and a JDK and Maven for the suites that run Apache Kafka beside
# kipper (tests/conformance, tests/java_ecosystem: scripts/kafka-reference fetches Kafka with
# Maven, and our Java programs are compiled with javac). `make test` runs this. They are
# installed with apt-get only where that needs no question: as root, or with sudo that asks
# no password. Anywhere else (macOS, a non-root user) this says which suites will be skipped
# and lets the rest of the suite run. Under CI=true a missing one still fails those suites
# loudly (tests/support/requires.py), so a broken CI image cannot hide them.
has() { command -v "$1" >/dev/null 2>&1 || { [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/$1" ]; }; }
missing=""
has java || missing="$missing openjdk-17-jdk-headless"
has javac || case "$missing" in *jdk*) ;; *) missing="$missing openjdk-17-jdk-headless" ;; esac
command -v mvn >/dev/null 2>&1 || missing="$missing maven"
[ -z "$missing" ] && exit 0

if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        sudo="none"
    fi
    if [ "$sudo" != none ]; then
        echo "installing Java and Maven (apt-get:$missing) for the Spark, conformance and Java-ecosystem tests"
        if $sudo apt-get update -qq && $sudo apt-get install -y -qq $missing; then
            exit 0
        fi
        echo "apt-get could not install$missing"
    fi
fi

case "$(printf '%s' "${CI:-}" | tr 'A-Z' 'a-z')" in
    true|1) echo "missing and cannot be installed here:$missing; with CI=$CI the suites that need them will FAIL" ;;
    *) echo "missing and cannot be installed here (no apt-get, or neither root nor password-less sudo):" \
            "$missing. Without Java the Spark tests will be skipped; without a JDK and Maven," \
            "tests/conformance and tests/java_ecosystem. Install a Java 17 JDK (or set JAVA_HOME)" \
            "and Maven to run them." ;;
esac
exit 0
