# chainpipe: the commands a new user needs. `make up` to run everything, `make test` to check it.
SHELL := /bin/bash
.DEFAULT_GOAL := help

.PHONY: help install build up down test lint typecheck test-unit test-int migrate topics bench kafka-start kafka-stop logs demo

help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-11s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json ## install npm packages and fetch the Kafka broker
	scripts/kafka/kafka.sh fetch

build: node_modules/.package-lock.json ## compile every app and library to dist/ (node dist/apps/<app>/src/main.js)
	npm run -s build

up: install ## build, then start Kafka, migrations, topics and every app; prints where to point a client
	scripts/dev/up.sh

demo: node_modules/.package-lock.json ## after `make up`: every service at work in a minute, each step printed
	npx --no-install tsx scripts/dev/demo.ts

down: ## stop everything `make up` started
	scripts/dev/down.sh

test: install ## lint, typecheck, unit and integration tests against real Kafka, Postgres, Redis
	scripts/test.sh

lint: node_modules/.package-lock.json ## eslint
	npx --no-install eslint .

typecheck: node_modules/.package-lock.json ## tsc --noEmit over the whole repo
	npx --no-install tsc -p tsconfig.json --noEmit

test-unit: node_modules/.package-lock.json ## pure tests, no I/O
	npm run -s test:unit

test-int: install ## integration tests on a test broker (TEST_KAFKA_BROKERS, or 19092: used if up, else started and stopped)
	scripts/dev/test-int.sh

migrate: node_modules/.package-lock.json ## create the database if needed and apply migrations
	npx --no-install tsx libs/db/src/migrate-cli.ts

topics: node_modules/.package-lock.json ## create every registry topic on KAFKA_BROKERS
	npx --no-install tsx scripts/create-topics.ts

bench: install ## benchmarks, e.g. make bench WHAT=ingest
	npm run -s bench -- $(WHAT)

kafka-start: install ## only the broker of `make up` (9092 + CHAINPIPE_PORT_OFFSET, data kept), no apps
	ROOT="$(CURDIR)"; . scripts/dev/stack-env.sh; KAFKA_KEEP_DATA=1 scripts/kafka/kafka.sh start

kafka-stop: ## stop the broker of `make up` (apps of `make up` still running lose it: `make down` stops both)
	ROOT="$(CURDIR)"; . scripts/dev/stack-env.sh; scripts/kafka/kafka.sh stop

logs: ## follow the logs of the apps `make up` runs (of CHAINPIPE_PORT_OFFSET)
	ROOT="$(CURDIR)"; . scripts/dev/stack-env.sh; tail -F "$$RUN"/logs/*.log
