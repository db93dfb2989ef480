package dev.laneway.engine.sample;

/** Partial sorting of token ids by their logits, so that top-k costs O(V log k) rather than a full sort. */
final class TopSelection {
    private TopSelection() {
    }

    /**
     * Rearranges {@code ids[0 .. length)} so that its first {@code k} entries are the ids of the k largest logits,
     * sorted from largest to smallest (ties: lower id first).
     */
    static void selectTop(int[] ids, int length, int k, float[] logits) {
        // A min-heap of the best k seen so far, rooted at the worst of them.
        for (int i = k / 2 - 1; i >= 0; i--) {
            siftDown(ids, i, k, logits);
        }
        for (int i = k; i < length; i++) {
            if (better(ids[i], ids[0], logits)) {
                int t = ids[0];
                ids[0] = ids[i];
                ids[i] = t;
                siftDown(ids, 0, k, logits);
            }
        }
        // Heap-sort the k entries: repeatedly move the worst to the end.
        for (int end = k - 1; end > 0; end--) {
            int t = ids[0];
            ids[0] = ids[end];
            ids[end] = t;
            siftDown(ids, 0, end, logits);
        }
    }

    private static boolean better(int a, int b, float[] logits) {
        return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
    }

    private static void siftDown(int[] ids, int i, int size, float[] logits) {
        while (true) {
            int worst = i;
            int l = 2 * i + 1;
            int r = l + 1;
            if (l < size && better(ids[worst], ids[l], logits)) {
                worst = l;
            }
            if (r < size && better(ids[worst], ids[r], logits)) {
                worst = r;
            }
            if (worst == i) {
                return;
            }
            int t = ids[i];
            ids[i] = ids[worst];
            ids[worst] = t;
            i = worst;
        }
    }
}
