/*
 * A stand-in for libcublasLt with the same C ABI, for testing blaslog's ctypes binding without a GPU.
 *
 * It exports the functions blaslog.native declares, with the prototypes of cublasLt.h (CUDA 12.9/13.x),
 * and answers from a small deterministic table:
 *   algoId 0  -> numerical impl flags 0x80201 (FMA | ACCUMULATOR_32F | INPUT_32F), tiles 128x32
 *   algoId 21 -> 0x40202 (HMMA | ACCUMULATOR_32F | INPUT_TF32) with COMPUTE_32F_FAST_TF32,
 *                0x10202 (HMMA | ACCUMULATOR_32F | INPUT_16F) otherwise; tiles 64x64, 64x32
 *   algoId 31 -> 0x10202
 *   any other algoId -> CUBLAS_STATUS_INVALID_VALUE from cublasLtMatmulAlgoInit
 * Failure modes, chosen by environment variables read at each call:
 *   STUB_CREATE_FAIL=1  cublasLtCreate returns CUBLAS_STATUS_NOT_INITIALIZED (no GPU / driver)
 *   STUB_CRASH_ALGO=N   cublasLtMatmulAlgoCapGetAttribute crashes (SIGSEGV) for algoId N
 * Build: gcc -shared -fPIC -o libcublasLt.so.12 stub_cublaslt.c   (-DOMIT_ALGO_INIT leaves that symbol out)
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef void *cublasLtHandle_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;

enum { SUCCESS = 0, NOT_INITIALIZED = 1, INVALID_VALUE = 7 };
enum { COMPUTE_32F_FAST_TF32 = 77 };

size_t cublasLtGetVersion(void) { return 120903; }
size_t cublasLtGetCudartVersion(void) { return 12080; }

const char *cublasLtGetStatusName(cublasStatus_t status) {
    switch (status) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    default: return "unrecognized status";
    }
}

const char *cublasLtGetStatusString(cublasStatus_t status) { return cublasLtGetStatusName(status); }

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
    const char *fail = getenv("STUB_CREATE_FAIL");
    if (fail && fail[0] == '1') return NOT_INITIALIZED;
    *handle = (cublasLtHandle_t)(uintptr_t)0x5eed;
    return SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) { return handle ? SUCCESS : NOT_INITIALIZED; }

#ifndef OMIT_ALGO_INIT
cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t handle, int computeType, int scaleType, int Atype, int Btype,
                                      int Ctype, int Dtype, int algoId, cublasLtMatmulAlgo_t *algo) {
    (void)scaleType; (void)Btype; (void)Ctype; (void)Dtype;
    if (!handle) return NOT_INITIALIZED;
    if (algoId != 0 && algoId != 21 && algoId != 31) return INVALID_VALUE;
    memset(algo, 0, sizeof *algo);
    algo->data[0] = (uint64_t)algoId;
    algo->data[1] = (uint64_t)computeType;
    algo->data[2] = (uint64_t)Atype;
    return SUCCESS;
}
#endif

static cublasStatus_t put(void *buf, size_t size, size_t *written, const void *value, size_t need) {
    if (written) *written = need;
    if (size == 0 && buf == NULL) return SUCCESS;          /* size query */
    if (size < need || buf == NULL) return INVALID_VALUE;
    memcpy(buf, value, need);
    return SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t *algo, int attr, void *buf,
                                                 size_t sizeInBytes, size_t *sizeWritten) {
    int id = (int)algo->data[0];
    const char *crash = getenv("STUB_CRASH_ALGO");
    if (crash && atoi(crash) == id) raise(SIGSEGV);
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    switch (attr) {
    case 15: /* NUMERICAL_IMPL_FLAGS, uint64 */
        u64 = id == 0 ? 0x80201u : (id == 21 && algo->data[1] == COMPUTE_32F_FAST_TF32) ? 0x40202u : 0x10202u;
        return put(buf, sizeInBytes, sizeWritten, &u64, sizeof u64);
    case 6: { /* TILE_IDS, array of uint32 */
        static const uint32_t t0[] = {16}, t21[] = {15, 13}, t31[] = {20, 24};
        const uint32_t *tiles = id == 0 ? t0 : id == 21 ? t21 : t31;
        size_t n = id == 0 ? 1 : 2;
        return put(buf, sizeInBytes, sizeWritten, tiles, n * sizeof(uint32_t));
    }
    case 13: { /* STAGES_IDS */
        static const uint32_t s21[] = {6, 12, 11};
        if (id == 0) return put(buf, sizeInBytes, sizeWritten, s21, 0);
        return put(buf, sizeInBytes, sizeWritten, s21, sizeof s21);
    }
    case 0: i32 = 1; return put(buf, sizeInBytes, sizeWritten, &i32, sizeof i32);     /* SPLITK_SUPPORT */
    case 1: u32 = 7; return put(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);     /* REDUCTION_SCHEME_MASK */
    case 2: u32 = 1; return put(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);     /* CTA_SWIZZLING_SUPPORT */
    case 3: case 4: i32 = 1; return put(buf, sizeInBytes, sizeWritten, &i32, sizeof i32);
    case 7: i32 = id == 21 ? 3 : 0; return put(buf, sizeInBytes, sizeWritten, &i32, sizeof i32);
    case 12: u32 = 0x1f; return put(buf, sizeInBytes, sizeWritten, &u32, sizeof u32); /* EPILOGUE_MASK */
    case 16: case 17: case 18: case 19: u32 = id == 0 ? 4 : 16;
        return put(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    default: return INVALID_VALUE;
    }
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t *algo, int attr, void *buf,
                                                    size_t sizeInBytes, size_t *sizeWritten) {
    int32_t id = (int32_t)algo->data[0];
    if (attr == 0) return put(buf, sizeInBytes, sizeWritten, &id, sizeof id);
    return INVALID_VALUE;
}
