// Loads libpq with dlopen on first use and forwards each `sift_PQ…` call to the libpq function of
// the same name (see CLibPQ.h for why it is not linked).

#include "CLibPQ.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *failure;
static char message[512];
static struct {
    PGconn * (*PQconnectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    ConnStatusType (*PQstatus)(const PGconn *conn);
    char * (*PQerrorMessage)(const PGconn *conn);
    void (*PQfinish)(PGconn *conn);
    char * (*PQhost)(const PGconn *conn);
    char * (*PQport)(const PGconn *conn);
    PQnoticeProcessor (*PQsetNoticeProcessor)(PGconn *conn, PQnoticeProcessor proc, void *arg);
    PGresult * (*PQexec)(PGconn *conn, const char *query);
    PGresult * (*PQexecParams)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat);
    PGresult * (*PQgetResult)(PGconn *conn);
    ExecStatusType (*PQresultStatus)(const PGresult *res);
    char * (*PQresultErrorMessage)(const PGresult *res);
    char * (*PQresultErrorField)(const PGresult *res, int fieldcode);
    void (*PQclear)(PGresult *res);
    int (*PQntuples)(const PGresult *res);
    int (*PQnfields)(const PGresult *res);
    Oid (*PQftype)(const PGresult *res, int field_num);
    char * (*PQgetvalue)(const PGresult *res, int tup_num, int field_num);
    int (*PQgetlength)(const PGresult *res, int tup_num, int field_num);
    int (*PQgetisnull)(const PGresult *res, int tup_num, int field_num);
    int (*PQputCopyData)(PGconn *conn, const char *buffer, int nbytes);
    int (*PQputCopyEnd)(PGconn *conn, const char *errormsg);
    int (*PQgetCopyData)(PGconn *conn, char **buffer, int async);
    unsigned char * (*PQunescapeBytea)(const unsigned char *strtext, size_t *retbuflen);
    void (*PQfreemem)(void *ptr);
} pq;

static const struct { const char *name; void **slot; } symbols[] = {
    {"PQconnectdbParams", (void **)&pq.PQconnectdbParams},
    {"PQstatus", (void **)&pq.PQstatus},
    {"PQerrorMessage", (void **)&pq.PQerrorMessage},
    {"PQfinish", (void **)&pq.PQfinish},
    {"PQhost", (void **)&pq.PQhost},
    {"PQport", (void **)&pq.PQport},
    {"PQsetNoticeProcessor", (void **)&pq.PQsetNoticeProcessor},
    {"PQexec", (void **)&pq.PQexec},
    {"PQexecParams", (void **)&pq.PQexecParams},
    {"PQgetResult", (void **)&pq.PQgetResult},
    {"PQresultStatus", (void **)&pq.PQresultStatus},
    {"PQresultErrorMessage", (void **)&pq.PQresultErrorMessage},
    {"PQresultErrorField", (void **)&pq.PQresultErrorField},
    {"PQclear", (void **)&pq.PQclear},
    {"PQntuples", (void **)&pq.PQntuples},
    {"PQnfields", (void **)&pq.PQnfields},
    {"PQftype", (void **)&pq.PQftype},
    {"PQgetvalue", (void **)&pq.PQgetvalue},
    {"PQgetlength", (void **)&pq.PQgetlength},
    {"PQgetisnull", (void **)&pq.PQgetisnull},
    {"PQputCopyData", (void **)&pq.PQputCopyData},
    {"PQputCopyEnd", (void **)&pq.PQputCopyEnd},
    {"PQgetCopyData", (void **)&pq.PQgetCopyData},
    {"PQunescapeBytea", (void **)&pq.PQunescapeBytea},
    {"PQfreemem", (void **)&pq.PQfreemem},
};

static void load(void) {
    // The names libpq has on Debian and other Linux systems, and on macOS (Homebrew's keg).
    static const char *const libraries[] = {"libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib",
                                            "/opt/homebrew/opt/libpq/lib/libpq.5.dylib", "/usr/local/opt/libpq/lib/libpq.5.dylib"};
    void *handle = NULL;
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0] && handle == NULL; i++) {
        handle = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);
    }
    if (handle == NULL) {
        snprintf(message, sizeof message, "the PostgreSQL client library (libpq) could not be loaded: %s", dlerror());
        failure = message;
        return;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        // POSIX guarantees a function pointer survives the trip through void *.
        if ((*symbols[i].slot = dlsym(handle, symbols[i].name)) == NULL) {
            snprintf(message, sizeof message, "the PostgreSQL client library (libpq) has no %s", symbols[i].name);
            failure = message;
            return;
        }
    }
}

const char *sift_pq_load(void) {
    pthread_once(&once, load);
    return failure;
}

PGconn * sift_PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) { return pq.PQconnectdbParams(keywords, values, expand_dbname); }

ConnStatusType sift_PQstatus(const PGconn *conn) { return pq.PQstatus(conn); }

char * sift_PQerrorMessage(const PGconn *conn) { return pq.PQerrorMessage(conn); }

void sift_PQfinish(PGconn *conn) { pq.PQfinish(conn); }

char * sift_PQhost(const PGconn *conn) { return pq.PQhost(conn); }

char * sift_PQport(const PGconn *conn) { return pq.PQport(conn); }

PQnoticeProcessor sift_PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) { return pq.PQsetNoticeProcessor(conn, proc, arg); }

PGresult * sift_PQexec(PGconn *conn, const char *query) { return pq.PQexec(conn, query); }

PGresult * sift_PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) { return pq.PQexecParams(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat); }

PGresult * sift_PQgetResult(PGconn *conn) { return pq.PQgetResult(conn); }

ExecStatusType sift_PQresultStatus(const PGresult *res) { return pq.PQresultStatus(res); }

char * sift_PQresultErrorMessage(const PGresult *res) { return pq.PQresultErrorMessage(res); }

char * sift_PQresultErrorField(const PGresult *res, int fieldcode) { return pq.PQresultErrorField(res, fieldcode); }

void sift_PQclear(PGresult *res) { pq.PQclear(res); }

int sift_PQntuples(const PGresult *res) { return pq.PQntuples(res); }

int sift_PQnfields(const PGresult *res) { return pq.PQnfields(res); }

Oid sift_PQftype(const PGresult *res, int field_num) { return pq.PQftype(res, field_num); }

char * sift_PQgetvalue(const PGresult *res, int tup_num, int field_num) { return pq.PQgetvalue(res, tup_num, field_num); }

int sift_PQgetlength(const PGresult *res, int tup_num, int field_num) { return pq.PQgetlength(res, tup_num, field_num); }

int sift_PQgetisnull(const PGresult *res, int tup_num, int field_num) { return pq.PQgetisnull(res, tup_num, field_num); }

int sift_PQputCopyData(PGconn *conn, const char *buffer, int nbytes) { return pq.PQputCopyData(conn, buffer, nbytes); }

int sift_PQputCopyEnd(PGconn *conn, const char *errormsg) { return pq.PQputCopyEnd(conn, errormsg); }

int sift_PQgetCopyData(PGconn *conn, char **buffer, int async) { return pq.PQgetCopyData(conn, buffer, async); }

unsigned char * sift_PQunescapeBytea(const unsigned char *strtext, size_t *retbuflen) { return pq.PQunescapeBytea(strtext, retbuflen); }

void sift_PQfreemem(void *ptr) { pq.PQfreemem(ptr); }
