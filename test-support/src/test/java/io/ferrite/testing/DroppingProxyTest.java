package io.ferrite.testing;

import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link DroppingProxy#close()} ends every pump, including one waiting for held answers (seal15 review L3: a test that
 * failed between {@code holdAnswers(true)} and {@code holdAnswers(false)} left its pumps waiting for the rest of the
 * fork, as {@code wait} does not wake on a socket's close). A bare socket stands for the broker: it writes an answer
 * the proxy holds.
 */
class DroppingProxyTest
{
    @Test
    void closeLetsGoOfHeldAnswersAndEndsItsPumps() throws Exception
    {
        try (ServerSocket brokerSide = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            final DroppingProxy proxy = new DroppingProxy(1, 0.0);
            proxy.dropping(false);
            proxy.target(brokerSide.getLocalPort());
            proxy.holdAnswers(true);
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
                Socket broker = brokerSide.accept())
            {
                final OutputStream answers = broker.getOutputStream();
                answers.write(new byte[] {1, 2, 3, 4});
                answers.flush();
                await(proxy::holdingAnswers, Duration.ofSeconds(30), "the proxy's pump holding the answer");
                assertEquals(2, proxy.livePumps(), "one pump each way");
                proxy.close();
                await(() -> proxy.livePumps() == 0, Duration.ofSeconds(30), () -> "every pump ended after close: "
                    + proxy.livePumps() + " still running");
            }
        }
    }
}
