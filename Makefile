# Sift's entry points. Every target first makes sure the C libraries and the PostgreSQL server the
# tests use are installed (scripts/install-deps.sh: apt-get as root, sudo otherwise, Homebrew on macOS).

SWIFT ?= swift

.PHONY: deps build format lint test sanitizers tsan asan crash-test sample bench fuzz fuzz-smoke fuzz-diff docs docs-coverage clean

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build

# The code's layout is swift-format's, with the repository's .swift-format (120 columns): `make format`
# rewrites the files in place, `make lint` (the first step of `make test`) fails on any finding.
SWIFT_SOURCES := Package.swift Sources Tests Samples Fuzz Benchmarks/Package.swift Benchmarks/Sources

format:
	$(SWIFT) format format --in-place --recursive $(SWIFT_SOURCES)

lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_SOURCES)

# The README's test command; CI runs exactly this. The suites use swift-testing only, so the
# empty XCTest pass (which would print "Executed 0 tests") is switched off. The store's crash tests
# (200 SIGKILLs of a writer process, 3 of a migration) run on their own afterwards, so its child process does not
# compete for the two cores with the suites that time themselves. Then the parse fuzzer runs for
# 30 s (`fuzz-smoke`), so a change that breaks its build or its round trip shows here, and last
# the sanitizer runs.
# The suites run next to a throwaway PostgreSQL server (scripts/with-postgres.sh starts it, passes
# its URL in SIFT_POSTGRES_URL and removes it afterwards, whatever the outcome).
test: deps lint
	$(SWIFT) build --build-tests
	bash scripts/with-postgres.sh $(SWIFT) test --skip-build --disable-xctest --skip CrashTests
	$(SWIFT) test --skip-build --disable-xctest --filter CrashTests
	$(MAKE) --no-print-directory fuzz-smoke
	$(MAKE) --no-print-directory sanitizers

# Each sanitizer builds the package and its tests into a folder of its own (.build-tsan,
# .build-asan) and fails on the first report: ThreadSanitizer over the suites that share
# predicates, sort descriptors, connections and a store between threads; AddressSanitizer over the
# golden corpus and the differential tests, which drive PCRE2, SQLite and libpq through pointers
# (next to a throwaway PostgreSQL server for the corpus; the 20,000-case PostgreSQL differential
# runs once, in the main suite, as it adds nothing under ASan that the corpus does not).
sanitizers: tsan asan

# Each builds only the test targets holding its suites (SIFT_TEST_TARGETS, read by Package.swift):
# the instrumented builds were two thirds of a fresh-clone `make test`.
TSAN_TARGETS := SiftEvaluationTests,SiftSQLiteTests,SiftStoreConcurrencyTests
ASAN_TARGETS := SiftSyntaxTests,SiftConformanceTests

tsan: deps
	SIFT_TEST_TARGETS=$(TSAN_TARGETS) $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	SIFT_TEST_TARGETS=$(TSAN_TARGETS) TSAN_OPTIONS=halt_on_error=1 \
		$(SWIFT) test --skip-build --disable-xctest --sanitize=thread \
		--scratch-path .build-tsan --filter 'ThreadSafetyTests|ContextQueueTests|AutoMergeTests|MergePolicyPropertyTests|ParentContextTests|HalvedReadTests'

# Use-after-return detection is off here, as it always was for these suites (StackGuard now measures
# the real stack under it too, which the fuzzer, run with it on, relies on).
# On Linux the AddressSanitizer build links with the toolchain's lld: gold prints a warning for
# each of the ASan runtime's ~150 local symbols it cannot export.
ASAN_LINK := $(if $(filter Linux,$(shell uname -s)),-Xswiftc -use-ld=lld,)
# Under ASan the SQLite differential runs 3,000 of its random cases and the store's differential 20
# of its rounds; the main suite runs all 20,000 cases and 60 rounds uninstrumented. The 20,000 took
# 89 s under ASan once the row guard called memory, which pushed a fresh-clone `make test` past 20
# minutes on 2 cores (8,000 kept it at 20:05 in November 2026); later the store's 60 rounds took
# 92 s there, the longest of the ASan suites by 40 s.

asan: deps
	SIFT_TEST_TARGETS=$(ASAN_TARGETS) $(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan \
		$(ASAN_LINK)
	bash scripts/with-postgres.sh env SIFT_TEST_TARGETS=$(ASAN_TARGETS) ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0 \
		SIFT_DIFF_CASES=3000 SIFT_STORE_DIFF_ROUNDS=20 \
		$(SWIFT) test --skip-build --disable-xctest --sanitize=address \
		--scratch-path .build-asan --filter 'Corpus|DifferentialTests' --skip memoryAgreesWithPostgreSQL

# The store's crash tests at length: 2000 SIGKILLs of a writer in the middle of its saves, each
# followed by an integrity check and the all-or-nothing invariants (`make test` runs 200), and 40
# SIGKILLs of a migration of 100,000 objects (`make test` runs 3).
crash-test: deps lint
	$(SWIFT) build --build-tests
	SIFT_CRASH_KILLS=2000 SIFT_MIGRATION_KILLS=40 $(SWIFT) test --skip-build --disable-xctest --filter CrashTests

# The quick start's main job: parse the bundled sample predicates and print their canonical forms,
# then filter the bundled people (adults with a child under 10 living in a city starting with
# "sao", accents and case ignored: São Paulo, Sao Paulo, São José dos Campos), count the same
# people again through the SQLite back-end, print the SQL that back-end runs, then load the people
# into a SiftStore file (model inferred from the JSON) and fetch the same people from it.
sample: build
	$(SWIFT) run --skip-build sift parse < Samples/predicates.txt
	$(SWIFT) run --skip-build sift filter 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' Samples/people.json
	$(SWIFT) run --skip-build sift filter 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' Samples/people.json --backend sqlite --count
	$(SWIFT) run --skip-build sift sql 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' --schema Samples/people.schema.json --entity Person
	rm -f .build/sample-people.sqlite .build/sample-people.sqlite-wal .build/sample-people.sqlite-shm
	$(SWIFT) run --skip-build sift store infer-model Samples/people.json > .build/sample-people.model.json
	$(SWIFT) run --skip-build sift store create .build/sample-people.sqlite --model .build/sample-people.model.json
	$(SWIFT) run --skip-build sift store import .build/sample-people.sqlite Record Samples/people.json
	$(SWIFT) run --skip-build sift store query .build/sample-people.sqlite Record 'age >= 18 AND ANY kids.age < 10 AND address.city BEGINSWITH[cd] "sao"' --sort name

bench: deps
	bash scripts/bench.sh

# libFuzzer over parse → print → parse (scripts/fuzz.sh): SiftSyntax and Fuzz/ParseFuzzer.swift
# built with swiftc under AddressSanitizer into Fuzz/build, the corpus in Fuzz/corpus. Any crash,
# leak, out-of-memory or slow input fails. `make fuzz` runs 60 s (FUZZ_SECONDS); the long run is
# `FUZZ_RUNS=10000000 make fuzz` (10 million executions, no time limit). `fuzz-smoke` is the 30 s
# run `make test` makes; it rebuilds the fuzzer only when one of its sources changed.
fuzz: deps
	bash scripts/fuzz.sh

fuzz-smoke:
	FUZZ_SECONDS=30 bash scripts/fuzz.sh

# The differential test (memory vs SQLite) at length: SIFT_DIFF_CASES (default 500000) cases from a
# time-based seed, or SIFT_DIFF_SEED to replay one.
fuzz-diff: deps
	bash scripts/fuzz-diff.sh

# The DocC archive of each library target (swift-docc-plugin), into .build/docs/TARGET.doccarchive.
# Any DocC warning (an unresolved symbol link, a malformed article…) fails the build. Not part of
# `make test`: it rebuilds each target for its symbol graph, which CI time does not afford; the
# articles' Swift samples are compiled and run by the ordinary tests (DocumentationSampleTests).
DOC_TARGETS := SiftSyntax SiftText SiftEvaluation SiftJSON SiftSQL SiftSQLite SiftStore SiftPostgres
DOCS_DIR := .build/docs

docs: deps
	@mkdir -p $(DOCS_DIR)
	@for t in $(DOC_TARGETS); do \
		$(SWIFT) package --allow-writing-to-directory $(DOCS_DIR) generate-documentation \
			--target $$t --output-path $(DOCS_DIR)/$$t.doccarchive --warnings-as-errors || exit 1; \
	done

# The same build with DocC's coverage report: per target, the public symbols without a summary
# (`--level brief`); the summary tables go to $(DOCS_DIR)/coverage-TARGET.txt. Members the compiler
# writes (`!=`, `hashValue`, Codable's and RawRepresentable's) are left out, and a member that
# implements a documented protocol requirement inherits the requirement's documentation.
docs-coverage: deps
	@mkdir -p $(DOCS_DIR)
	@for t in $(DOC_TARGETS); do \
		$(SWIFT) package --allow-writing-to-directory $(DOCS_DIR) generate-documentation \
			--target $$t --output-path $(DOCS_DIR)/$$t.doccarchive \
			--experimental-documentation-coverage --coverage-summary-level brief \
			--experimental-skip-synthesized-symbols --enable-inherited-docs > $(DOCS_DIR)/coverage-$$t.txt 2>&1 || { cat $(DOCS_DIR)/coverage-$$t.txt; exit 1; }; \
		echo "$$t:"; sed -n '/| Abstract/,/^ *$$/p' $(DOCS_DIR)/coverage-$$t.txt; \
	done

clean:
	rm -rf .build .build-tsan .build-asan Benchmarks/.build Fuzz/build
