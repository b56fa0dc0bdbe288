/* The sample sharded safetensors checkpoint (st_sample.c). */
#ifndef MFS_GEN_ST_SAMPLE_H
#define MFS_GEN_ST_SAMPLE_H

/* Write it into dir (created if missing); 0, or 1 with a message. */
int gen_st_sample(const char *dir);

#endif
