#ifndef MODELFS_FS_STORE_H
#define MODELFS_FS_STORE_H
/* store.c: model stores made of links (Hugging Face cache, Ollama). */
#include <stdbool.h>

struct inode;

/* mi (a model's inode) is a blob of a Hugging Face cache
 * (models--*|datasets--*|spaces--* / blobs / *) or of an Ollama store
 * (blobs / sha256-<64 hex>). */
bool store_blob(const struct inode *mi);
/* Why a blob may not be edited, for an errors line. */
extern const char store_blob_msg[];
/* Logs why a blob may not be edited; returns -EROFS. */
int store_refuse(const struct inode *mi);
#endif
