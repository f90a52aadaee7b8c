package io.ferrite.perf.damage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * One kind of damage done to a stopped broker's files. Segments are counted from 1 by base offset
 * ("segment 3 of 11"), batches from 1 by position in their segment; "old" is segment 3 (rolled, well
 * before the active one), "active" the last. A case that finds no file to damage (a file the broker
 * does not write) says so and the broker is restarted undamaged, so that its row is still there.
 */
enum DamageCase
{
    BASELINE("no damage: the harness itself (everything must be served)")
    {
        @Override
        String apply(final LogFiles f)
        {
            return "nothing changed";
        }
    },
    FLIP_VALUE_OLD("one bit flipped in a record value in batch 5 of segment 3")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return flipValue(f, old(f));
        }
    },
    FLIP_VALUE_ACTIVE("one bit flipped in a record value in batch 5 of the active segment")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return flipValue(f, active(f));
        }
    },
    FLIP_LENGTH_OLD("bit 0x40 flipped in the high byte of batch 5's length field, segment 3 (a frame ~1 GiB long)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            final Target t = batch5(f, old(f));
            final long at = t.batch.position() + LogFiles.LENGTH_OFFSET;
            return "flipped bit 0x40 of byte " + at + " (batch length, high byte) of " + t + ": " + LogFiles.flip(t.file, at, 0x40);
        }
    },
    TRUNCATE_OLD_MIDBATCH("segment 3 truncated in the middle of its batch 5")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return truncateMid(old(f));
        }
    },
    TRUNCATE_ACTIVE_MIDBATCH("active segment truncated in the middle of its batch 5")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return truncateMid(active(f));
        }
    },
    ZERO_PAGE_OLD("the 4 KiB page holding the start of batch 5 of segment 3 zeroed (a lost page write)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            final Target t = batch5(f, old(f));
            final long page = t.batch.position() / 4096 * 4096;
            LogFiles.zero(t.file, page, 4096);
            return "zeroed bytes " + page + ".." + (page + 4095) + " of " + t;
        }
    },
    DELETE_INDEX_OLD("segment 3's .index deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(LogFiles.sibling(old(f).file, ".index"));
        }
    },
    GARBAGE_INDEX_OLD("segment 3's .index overwritten with random bytes (same length)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(LogFiles.sibling(old(f).file, ".index"));
        }
    },
    GARBAGE_INDEX_ACTIVE("the active segment's .index overwritten with random bytes (same length)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(LogFiles.sibling(active(f).file, ".index"));
        }
    },
    DELETE_TIMEINDEX_OLD("segment 3's .timeindex deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(LogFiles.sibling(old(f).file, ".timeindex"));
        }
    },
    GARBAGE_TIMEINDEX_OLD("segment 3's .timeindex overwritten with random bytes (same length)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(LogFiles.sibling(old(f).file, ".timeindex"));
        }
    },
    DELETE_RECOVERY_CHECKPOINT("recovery-point-offset-checkpoint deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(f.logDir.resolve("recovery-point-offset-checkpoint"));
        }
    },
    GARBAGE_RECOVERY_CHECKPOINT("recovery-point-offset-checkpoint overwritten with random bytes")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(f.logDir.resolve("recovery-point-offset-checkpoint"));
        }
    },
    DELETE_LOGSTART_CHECKPOINT("log-start-offset-checkpoint deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(f.logDir.resolve("log-start-offset-checkpoint"));
        }
    },
    GARBAGE_LOGSTART_CHECKPOINT("log-start-offset-checkpoint overwritten with random bytes")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(f.logDir.resolve("log-start-offset-checkpoint"));
        }
    },
    GARBAGE_SNAPSHOT("the newest producer snapshot (.snapshot) overwritten with random bytes (same length)")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            final List<Path> snapshots = f.withSuffix(".snapshot");
            return snapshots.isEmpty() ? notApplicable("no .snapshot file in " + f.partitionDir.getFileName())
                : garbage(snapshots.get(snapshots.size() - 1));
        }
    },
    DELETE_SNAPSHOTS("every producer snapshot (.snapshot) deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            final List<Path> snapshots = f.withSuffix(".snapshot");
            if (snapshots.isEmpty())
            {
                return notApplicable("no .snapshot file in " + f.partitionDir.getFileName());
            }
            for (final Path p : snapshots)
            {
                Files.delete(p);
            }
            return "deleted " + snapshots.size() + " snapshots: " + names(snapshots);
        }
    },
    DELETE_META_PROPERTIES("meta.properties of the log directory deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(f.logDir.resolve("meta.properties"));
        }
    },
    GARBAGE_META_PROPERTIES("meta.properties of the log directory overwritten with random bytes")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(f.logDir.resolve("meta.properties"));
        }
    },
    DELETE_PARTITION_METADATA("the partition's partition.metadata (topic id) deleted")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return delete(f.partitionDir.resolve("partition.metadata"));
        }
    },
    GARBAGE_PARTITION_METADATA("the partition's partition.metadata (topic id) overwritten with random bytes")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            return garbage(f.partitionDir.resolve("partition.metadata"));
        }
    },
    DELETE_MIDDLE_SEGMENT("the middle segment (5 of 10, 6 of 11...) deleted with its .index and .timeindex")
    {
        @Override
        String apply(final LogFiles f) throws IOException
        {
            final List<Path> segments = f.segments();
            if (segments.size() < 3)
            {
                return notApplicable("only " + segments.size() + " segments");
            }
            final int i = (segments.size() - 1) / 2;
            final Path log = segments.get(i);
            final StringBuilder what = new StringBuilder("deleted segment " + (i + 1) + " of " + segments.size() + ": ");
            for (final String suffix : new String[] {".log", ".index", ".timeindex"})
            {
                final Path p = LogFiles.sibling(log, suffix);
                what.append(p.getFileName()).append(Files.deleteIfExists(p) ? " " : " (absent) ");
            }
            return what.toString().trim();
        }
    };

    /** Prefix of {@link #apply}'s answer when there was nothing to damage. */
    static final String NOT_APPLICABLE = "n/a: ";

    final String description;

    DamageCase(final String description)
    {
        this.description = description;
    }

    /** The name on the command line and in the table: {@code flip-value-old}. */
    String id()
    {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static DamageCase byId(final String id)
    {
        for (final DamageCase c : values())
        {
            if (c.id().equals(id))
            {
                return c;
            }
        }
        throw new IllegalArgumentException("no case " + id + "; the cases: " + java.util.Arrays.stream(values()).map(DamageCase::id).toList());
    }

    /** Damages the files and says exactly what it changed, or {@link #NOT_APPLICABLE} and why. */
    abstract String apply(LogFiles files) throws IOException;

    /** A segment picked by a case: its file, its number (from 1) and how many there are. */
    record Segment(Path file, int number, int count)
    {
        @Override
        public String toString()
        {
            return file.getFileName() + " (segment " + number + " of " + count + ")";
        }
    }

    /** A batch picked in a segment. */
    record Target(Path file, LogFiles.Batch batch, String where)
    {
        @Override
        public String toString()
        {
            return where + ", batch at position " + batch.position() + " base offset " + batch.baseOffset() + " size " + batch.size();
        }
    }

    private static final class NotApplicable extends IOException
    {
        NotApplicable(final String why)
        {
            super(why);
        }
    }

    /** Runs {@link #apply}, turning a missing target into its {@link #NOT_APPLICABLE} answer. */
    String applyTo(final LogFiles files) throws IOException
    {
        try
        {
            return apply(files);
        }
        catch (final NotApplicable ex)
        {
            return notApplicable(ex.getMessage());
        }
    }

    static Segment old(final LogFiles f) throws IOException
    {
        final List<Path> segments = f.segments();
        if (segments.size() < 4)
        {
            throw new NotApplicable("only " + segments.size() + " segments, segment 3 would be the active one or missing");
        }
        return new Segment(segments.get(2), 3, segments.size());
    }

    static Segment active(final LogFiles f) throws IOException
    {
        final List<Path> segments = f.segments();
        if (segments.isEmpty())
        {
            throw new NotApplicable("no segment");
        }
        return new Segment(segments.get(segments.size() - 1), segments.size(), segments.size());
    }

    /** Batch 5 of the segment (the middle one when it has fewer than 9). */
    static Target batch5(final LogFiles f, final Segment s) throws IOException
    {
        final List<LogFiles.Batch> batches = LogFiles.batches(s.file);
        if (batches.isEmpty())
        {
            throw new NotApplicable("no batch in " + s);
        }
        final int i = batches.size() >= 9 ? 4 : batches.size() / 2;
        return new Target(s.file, batches.get(i), s + ", batch " + (i + 1) + " of " + batches.size());
    }

    private static String flipValue(final LogFiles f, final Segment s) throws IOException
    {
        final Target t = batch5(f, s);
        // 61 bytes of batch header, then the first record: its length, attributes, timestamp and
        // offset deltas, key length and value length take under 12 bytes, so byte 100 of the
        // records is inside the first record's value (1000 bytes)
        final long at = t.batch.position() + LogFiles.RECORDS_OFFSET + 100;
        return "flipped bit 0x10 of byte " + at + " (first record's value) of " + t + ": " + LogFiles.flip(t.file, at, 0x10);
    }

    private static String truncateMid(final Segment s) throws IOException
    {
        final Target t = batch5(null, s);
        final long size = t.batch.position() + t.batch.size() / 2;
        final long before = Files.size(t.file);
        LogFiles.truncate(t.file, size);
        return "truncated " + t + " to " + size + " bytes (was " + before + ")";
    }

    private static String delete(final Path p) throws IOException
    {
        if (!Files.exists(p))
        {
            return notApplicable("no " + p.getFileName() + " in " + p.getParent().getFileName());
        }
        Files.delete(p);
        return "deleted " + p.getParent().getFileName() + "/" + p.getFileName();
    }

    String garbage(final Path p) throws IOException
    {
        if (!Files.exists(p))
        {
            return notApplicable("no " + p.getFileName() + " in " + p.getParent().getFileName());
        }
        final long seed = id().hashCode();
        final long before = Files.size(p);
        final int length = LogFiles.garbage(p, seed);
        return "overwrote " + p.getParent().getFileName() + "/" + p.getFileName() + " (" + before + " bytes) with " + length
            + " random bytes, seed " + seed;
    }

    private static String notApplicable(final String why)
    {
        return NOT_APPLICABLE + why;
    }

    private static String names(final List<Path> paths)
    {
        return String.join(", ", paths.stream().map(p -> p.getFileName().toString()).toList());
    }
}
