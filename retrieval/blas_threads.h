// How many threads the system BLAS (what FAISS's inner products call) runs
// a call on. Looked up at run time, not linked: libblas.so.3 is whichever
// implementation Debian's alternatives chose (OpenBLAS, BLIS, the reference
// BLAS), and only the threaded ones have a knob.
#ifndef SPEAKERMEM_RETRIEVAL_BLAS_THREADS_H_
#define SPEAKERMEM_RETRIEVAL_BLAS_THREADS_H_

namespace speakermem::retrieval {

// Asks the BLAS to run each call on `n` threads (1: on the caller's thread
// alone); does nothing for a BLAS without threads.
void LimitBlasThreads(int n);

// The BLAS's thread count, or -1 for a BLAS without threads.
int BlasThreads();

}  // namespace speakermem::retrieval

#endif  // SPEAKERMEM_RETRIEVAL_BLAS_THREADS_H_
