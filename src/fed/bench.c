#include "bench.h"

#include "experiment.h"
#include "fileio.h"
#include "rng.h"
#include "train.h"
#include "mpi/msgframe.h"
#include "mpi/msgmpi.h"

#include <mpi.h>

#include <cblas.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The PyTorch side: same layers, batch, SGD+momentum step, one thread, synthetic data.
 * Prints "samples_per_second=X torch=VERSION". */
static const char *torch_script =
    "import sys, time\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    print('torch_unavailable=' + type(e).__name__); sys.exit(3)\n"
    "torch.set_num_threads(1)\n"
    "sizes=[int(s) for s in sys.argv[1].split(',')]; B=int(sys.argv[2]); secs=float(sys.argv[3])\n"
    "layers=[]\n"
    "for i in range(len(sizes)-1):\n"
    "    layers.append(torch.nn.Linear(sizes[i], sizes[i+1]))\n"
    "    if i < len(sizes)-2: layers.append(torch.nn.ReLU())\n"
    "net=torch.nn.Sequential(*layers)\n"
    "opt=torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)\n"
    "lossf=torch.nn.CrossEntropyLoss()\n"
    "N=8192; X=torch.rand(N, sizes[0]); Y=torch.randint(0, sizes[-1], (N,))\n"
    "def run(t):\n"
    "    n=0; s=0; t0=time.perf_counter()\n"
    "    while time.perf_counter()-t0 < t:\n"
    "        for _ in range(50):\n"
    "            x=X[s:s+B]; y=Y[s:s+B]; s=(s+B)%(N-B)\n"
    "            opt.zero_grad(set_to_none=True); l=lossf(net(x), y); l.backward(); opt.step(); n+=B\n"
    "    return n/(time.perf_counter()-t0)\n"
    "run(min(1.0, secs/3))\n"
    "print('samples_per_second=%.1f torch=%s' % (run(secs), torch.__version__))\n";

static double run_torch(const fed_config *cfg, char *version, size_t vlen, char *why, size_t wlen) {
    char script[] = "/tmp/fedtrain-bench-XXXXXX";
    int fd = mkstemp(script);
    if (fd < 0) {
        snprintf(why, wlen, "cannot create a temporary script");
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    fputs(torch_script, f);
    fclose(f);
    char layers[256] = "";
    for (int i = 0; i < cfg->nsizes; i++)
        snprintf(layers + strlen(layers), sizeof layers - strlen(layers), "%s%d", i ? "," : "", cfg->sizes[i]);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 '%s' %s %s %d %g 2>&1", cfg->python, script, layers,
             cfg->batch, cfg->bench_seconds);
    FILE *p = popen(cmd, "r");
    double sps = -1;
    char line[512];
    snprintf(why, wlen, "python produced no result");
    while (p && fgets(line, sizeof line, p)) {
        char ver[128];
        if (sscanf(line, "samples_per_second=%lf torch=%127s", &sps, ver) == 2)
            snprintf(version, vlen, "%s", ver);
        else if (strncmp(line, "torch_unavailable=", 18) == 0)
            if (snprintf(why, wlen, "torch is not importable (%s)", strtok(line + 18, "\n")) >= (int)wlen)
                why[wlen - 1] = 0;
    }
    if (p) pclose(p);
    remove(script);
    return sps;
}

int run_bench(fed_config *cfg) {
    blas_set_threads(cfg->threads);
    /* Synthetic inputs: throughput does not depend on pixel values. */
    int n = 8192, dim = cfg->sizes[0];
    dataset d = {n, 1, dim, dim, malloc(sizeof(float) * (size_t)n * dim), malloc((size_t)n)};
    if (!d.x || !d.y) return 2;
    rng_t r;
    rng_seed(&r, 7);
    for (size_t i = 0; i < (size_t)n * dim; i++) d.x[i] = (float)rng_uniform(&r);
    for (int i = 0; i < n; i++) d.y[i] = (uint8_t)rng_below(&r, (uint32_t)cfg->sizes[cfg->nsizes - 1]);
    mlp m;
    mlp_work w;
    if (mlp_create(&m, cfg->sizes, cfg->nsizes, 1) != 0 || mlp_work_create(&w, &m, cfg->batch) != 0) return 2;
    float *vel = calloc(m.nparams, sizeof(float));
    sgd_config opt = {0.01f, 0.9f, 0.0f, 0.0f};
    train_stats ts;
    train_epochs(&m, &w, &d, 1, cfg->batch, &opt, vel, NULL, 1, &ts); /* warm-up */
    long samples = 0;
    double t0 = now_seconds(), el = 0;
    int e = 0;
    while ((el = now_seconds() - t0) < cfg->bench_seconds) {
        train_epochs(&m, &w, &d, 1, cfg->batch, &opt, vel, NULL, (uint64_t)++e, &ts);
        samples += ts.samples;
    }
    el = now_seconds() - t0;
    double sps = samples / el;
    double flops = 0;
    for (int l = 0; l + 1 < cfg->nsizes; l++) flops += 2.0 * cfg->sizes[l] * cfg->sizes[l + 1];
    flops *= 3.0; /* forward + two backward products per layer (approx.) */
    printf("fedtrain bench: layers");
    for (int i = 0; i < cfg->nsizes; i++) printf("%c%d", i ? '-' : ' ', cfg->sizes[i]);
    printf(", batch %d, SGD+momentum, %d BLAS thread(s), OpenBLAS core %s\n", cfg->batch, cfg->threads,
           openblas_get_corename());
    printf("  fedtrain (C, OpenBLAS sgemm): %10.0f samples/s per core  (~%.1f GFLOP/s)\n", sps / cfg->threads,
           sps * flops / 1e9);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batch", cfg->batch);
    cJSON_AddNumberToObject(o, "threads", cfg->threads);
    cJSON_AddStringToObject(o, "openblas_core", openblas_get_corename());
    cJSON_AddNumberToObject(o, "fedtrain_samples_per_second_per_core", sps / cfg->threads);
    if (cfg->torch != 0) {
        char ver[128] = "?", why[256];
        double tps = run_torch(cfg, ver, sizeof ver, why, sizeof why);
        if (tps > 0) {
            printf("  PyTorch %s (1 thread):      %10.0f samples/s\n", ver, tps);
            printf("  ratio fedtrain / PyTorch:     %10.2fx\n", sps / cfg->threads / tps);
            cJSON_AddNumberToObject(o, "torch_samples_per_second", tps);
            cJSON_AddStringToObject(o, "torch_version", ver);
            cJSON_AddNumberToObject(o, "ratio", sps / cfg->threads / tps);
        } else {
            printf("  PyTorch: not measured: %s\n", why);
            cJSON_AddStringToObject(o, "torch_unavailable", why);
            if (cfg->torch == 1) {
                fprintf(stderr, "fedtrain: --torch on: %s\n", why);
                return 2;
            }
        }
    }
    if (cfg->out_dir[0]) {
        char err[1200], path[1100];
        char *text = cJSON_Print(o);
        snprintf(path, sizeof path, "%s/bench.json", cfg->out_dir);
        if (mkdir_p(cfg->out_dir, err, sizeof err) != 0 ||
            write_file_atomic(path, text, strlen(text), err, sizeof err) != 0) {
            fprintf(stderr, "fedtrain: %s\n", err);
            free(text);
            return 2;
        }
        free(text);
        printf("  -> %s\n", path);
    }
    cJSON_Delete(o);
    free(vel);
    mlp_work_free(&w);
    mlp_free(&m);
    free(d.x);
    free(d.y);
    return 0;
}

int run_comm_bench(fed_config *cfg) {
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (ranks < 2) {
        if (rank == 0) fprintf(stderr, "fedtrain: bench --comm needs at least 2 MPI ranks\n");
        return 2;
    }
    size_t np = 0;
    for (int l = 0; l + 1 < cfg->nsizes; l++) np += (size_t)cfg->sizes[l] * cfg->sizes[l + 1] + cfg->sizes[l + 1];
    size_t payload = np * sizeof(float), fb = cmsg_frame_bytes(payload);
    size_t cap = fb, all_cap = fb * (size_t)ranks;
    uint8_t *frame = calloc(fb, 1), *all = rank == 0 ? malloc(fb * (size_t)ranks) : NULL;
    cmsg_seal(frame, 1, 1, 0, (uint32_t)rank, payload);
    int reps = 20;
    double t[4] = {0};
    for (int it = -2; it < reps; it++) { /* two warm-up iterations */
        double t0;
        size_t n = fb;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        cmsg_mpi_bcast(&frame, &cap, &n, 0, MPI_COMM_WORLD);
        double a = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (rank == 0)
            for (int r = 1; r < ranks; r++) cmsg_mpi_send(frame, fb, r, 5, MPI_COMM_WORLD);
        else
            cmsg_mpi_recv(&frame, &cap, &n, 0, 5, MPI_COMM_WORLD, NULL);
        double b = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (rank == 0)
            for (int r = 1; r < ranks; r++) cmsg_mpi_recv(&all, &all_cap, &n, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, NULL);
        else
            cmsg_mpi_send(frame, fb, 0, 6, MPI_COMM_WORLD);
        double c = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Gather(frame, (int)fb, MPI_BYTE, all, (int)fb, MPI_BYTE, 0, MPI_COMM_WORLD);
        double d = MPI_Wtime() - t0;
        if (it >= 0) {
            t[0] += a;
            t[1] += b;
            t[2] += c;
            t[3] += d;
        }
    }
    if (rank == 0) {
        double mb = (double)fb * (ranks - 1) / 1e6;
        const char *names[4] = {"broadcast: MPI_Bcast", "broadcast: loop of MPI_Send", "gather: MPI_Probe+MPI_Recv",
                                "gather: MPI_Gather"};
        printf("fedtrain bench --comm: %d ranks, frame %zu bytes (%zu parameters), %d repetitions\n", ranks, fb, np,
               reps);
        for (int k = 0; k < 4; k++)
            printf("  %-30s %8.3f ms  (%7.1f MB/s, %.2f MB moved)\n", names[k], 1e3 * t[k] / reps, mb / (t[k] / reps),
                   mb);
    }
    free(frame);
    free(all);
    return 0;
}
