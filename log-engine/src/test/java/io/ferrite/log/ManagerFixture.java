package io.ferrite.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;

/** A test's log directory and the manager open on it, closed after each test (the segment replacement tests'). */
abstract class ManagerFixture
{
    @TempDir
    Path dir;

    LogManager manager;

    @AfterEach
    void closeManager() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }
}
