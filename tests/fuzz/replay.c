/*
 * Replays a fuzz target over files and folders of inputs, so that the
 * corpus runs as a plain test on every build (and without libFuzzer):
 *   fuzz-X-replay FILE_OR_DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run(const char *path, int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char child[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		if (run(child, count) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0;
	for (int i = 1; i < argc; i++)
		if (run(argv[i], &count) < 0) {
			fprintf(stderr, "replay: cannot read '%s'\n", argv[i]);
			return 1;
		}
	printf("replayed %d inputs\n", count);
	return count ? 0 : 1;
}
