package org.ferrodl.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Issue 3's acceptance bar: the LeNet-style CNN reaches at least 0.97 test accuracy on mnist10k. */
class LeNetMnistExampleTest {

    @Test
    void lenetReachesNinetySevenPercentOnTheTestDigits() throws Exception {
        LeNetMnistExample.Result r = LeNetMnistExample.run(LeNetMnistExample.DEFAULT_EPOCHS, null, System.out);
        assertTrue(r.testAccuracy >= 0.97, "test accuracy " + r.testAccuracy + " < 0.97");
        assertTrue(r.trainExamples > 7000, "trained on " + r.trainExamples + " digits");
    }
}
