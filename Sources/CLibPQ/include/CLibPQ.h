// The part of the PostgreSQL client library (libpq) SiftPostgres uses, loaded on first use with
// dlopen instead of linked: linking libpq made every `sift` process load it and its twenty
// dependencies (TLS, Kerberos, LDAP…) at start-up, about 18 million instructions, whether or not it
// ever spoke to a server. The declarations are libpq's public C interface (libpq-fe.h, stable since
// PostgreSQL 7.4 for these functions); each `sift_PQ…` function calls the libpq function of the
// same name. Call `sift_pq_load()` first: it returns NULL once libpq is loaded, or why it could not be.
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

/// Loads libpq (once, thread-safely); NULL when it is ready, else a message saying why not.
const char *sift_pq_load(void);

PGconn *sift_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname);
ConnStatusType sift_PQstatus(const PGconn *conn);
char *sift_PQerrorMessage(const PGconn *conn);
void sift_PQfinish(PGconn *conn);
char *sift_PQhost(const PGconn *conn);
char *sift_PQport(const PGconn *conn);
PQnoticeProcessor sift_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg);
PGresult *sift_PQexec(PGconn *conn, const char *query);
PGresult *sift_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                            const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                            int resultFormat);
PGresult *sift_PQgetResult(PGconn *conn);
ExecStatusType sift_PQresultStatus(const PGresult *res);
char *sift_PQresultErrorMessage(const PGresult *res);
char *sift_PQresultErrorField(const PGresult *res, int fieldcode);
void sift_PQclear(PGresult *res);
int sift_PQntuples(const PGresult *res);
int sift_PQnfields(const PGresult *res);
Oid sift_PQftype(const PGresult *res, int field_num);
char *sift_PQgetvalue(const PGresult *res, int tup_num, int field_num);
int sift_PQgetlength(const PGresult *res, int tup_num, int field_num);
int sift_PQgetisnull(const PGresult *res, int tup_num, int field_num);
int sift_PQputCopyData(PGconn *conn, const char *buffer, int nbytes);
int sift_PQputCopyEnd(PGconn *conn, const char *errormsg);
int sift_PQgetCopyData(PGconn *conn, char **buffer, int async);
unsigned char *sift_PQunescapeBytea(const unsigned char *strtext, size_t *retbuflen);
void sift_PQfreemem(void *ptr);

#endif
