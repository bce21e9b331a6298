/* This is a really minimal testing framework for C.
 *
 * Example:
 *
 * test_cond("Check if 1 == 1", 1==1)
 * test_cond("Check if 5 > 10", 5 > 10)
 * test_report()
 *
 * ----------------------------------------------------------------------------
 *
 * Copyright (c) 2010-2012, Redis Ltd.
 * All rights reserved.
 *
 * Redistribution and use in source and binary forms, with or without
 * modification, are permitted provided that the following conditions are met:
 *
 *   * Redistributions of source code must retain the above copyright notice,
 *     this list of conditions and the following disclaimer.
 *   * Redistributions in binary form must reproduce the above copyright
 *     notice, this list of conditions and the following disclaimer in the
 *     documentation and/or other materials provided with the distribution.
 *   * Neither the name of Redis nor the names of its contributors may be used
 *     to endorse or promote products derived from this software without
 *     specific prior written permission.
 *
 * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
 * AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
 * IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE
 * ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT OWNER OR CONTRIBUTORS BE
 * LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR
 * CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF
 * SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS
 * INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN
 * CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE)
 * ARISING IN ANY WAY OUT OF THE USE OF THIS SOFTWARE, EVEN IF ADVISED OF THE
 * POSSIBILITY OF SUCH DAMAGE.
 */

#ifndef __TESTHELP_H
#define __TESTHELP_H

#define TEST_ACCURATE (1 << 0)
#define TEST_LARGE_MEMORY (1 << 1)
#define TEST_VALGRIND (1 << 2)

extern int __failed_tests;
extern int __test_num;

#define test_cond(descr, _c)                                                                                           \
    do {                                                                                                               \
        __test_num++;                                                                                                  \
        printf("%d - %s: ", __test_num, descr);                                                                        \
        if (_c)                                                                                                        \
            printf("PASSED\n");                                                                                        \
        else {                                                                                                         \
            printf("FAILED\n");                                                                                        \
            __failed_tests++;                                                                                          \
        }                                                                                                              \
    } while (0)
#define test_report()                                                                                                  \
    do {                                                                                                               \
        printf("%d tests, %d passed, %d failed\n", __test_num, __test_num - __failed_tests, __failed_tests);           \
        if (__failed_tests) {                                                                                          \
            printf("=== WARNING === We have failed tests here...\n");                                                  \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif
