// The types and constants of the PostgreSQL client library (libpq) that SiftPostgres uses, as
// libpq's public C interface (libpq-fe.h) declares them. Only these: libpq is not linked but loaded
// with dlopen on the first connection (Sources/SiftPostgres/LibPQ.swift says why), so this module
// needs neither libpq's header nor the library to build.
#ifndef SIFT_CLIBPQ_H
#define SIFT_CLIBPQ_H

#include <stddef.h>

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;

typedef enum {
    CONNECTION_OK,
    CONNECTION_BAD
} ConnStatusType;

typedef enum {
    PGRES_EMPTY_QUERY = 0,
    PGRES_COMMAND_OK,
    PGRES_TUPLES_OK,
    PGRES_COPY_OUT,
    PGRES_COPY_IN,
    PGRES_BAD_RESPONSE,
    PGRES_NONFATAL_ERROR,
    PGRES_FATAL_ERROR,
    PGRES_COPY_BOTH,
    PGRES_SINGLE_TUPLE,
    PGRES_PIPELINE_SYNC,
    PGRES_PIPELINE_ABORTED
} ExecStatusType;

typedef void (*PQnoticeProcessor)(void *arg, const char *message);

#endif
