# Sift's entry points. Every target first makes sure the C libraries are installed
# (scripts/install-deps.sh: apt-get as root, sudo otherwise, Homebrew on macOS).

SWIFT ?= swift

.PHONY: deps build test sample bench fuzz fuzz-diff clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The README's test command; CI runs exactly this. The suites use swift-testing only, so the
# empty XCTest pass (which would print "Executed 0 tests") is switched off.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest

# The quick start's main job: parse the bundled sample predicates and print their canonical forms,
# then filter the bundled people (adults with a child under 10 living in a city starting with
# "sao", accents and case ignored: São Paulo, Sao Paulo, São José dos Campos), count the same
# people again through the SQLite back-end, and print the SQL that back-end runs.
sample: build
	$(SWIFT) run --skip-build sift parse < Samples/predicates.txt
	$(SWIFT) run --skip-build sift filter 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' Samples/people.json
	$(SWIFT) run --skip-build sift filter 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' Samples/people.json --backend sqlite --count
	$(SWIFT) run --skip-build sift sql 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' --schema Samples/people.schema.json --entity Person

bench: deps
	bash scripts/bench.sh

fuzz: deps
	bash scripts/fuzz.sh

# The differential test (memory vs SQLite) at length: SIFT_DIFF_CASES (default 500000) cases from a
# time-based seed, or SIFT_DIFF_SEED to replay one.
fuzz-diff: deps
	bash scripts/fuzz-diff.sh

clean:
	rm -rf .build Benchmarks/.build Fuzz/build
